module lifecycle-test-go

go 1.24

require cairn.invalid/sdk v0.1.0

// The SDK from this checkout; the lifecycle harness builds with the copy cairn-guest-build
// embeds.
replace cairn.invalid/sdk => ../../../guest-sdk/go
