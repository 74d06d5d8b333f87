//! Program code for imported resources (Rust, Python, TypeScript): `cairn import`.
