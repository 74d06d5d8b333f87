module ${CRATE}-example

go 1.24

require cairn.invalid/sdk v0.1.0
