module ${CRATE}

go 1.24

// Cairn's Go SDK: `cairn up` builds with the copy embedded in cairn (see README.md for
// building and testing natively).
require cairn.invalid/sdk v0.1.0
