module go-demo

go 1.24

require cairn.invalid/sdk v0.1.0

// The SDK from this checkout; `cairn up` builds with the copy it embeds instead.
replace cairn.invalid/sdk => ../../../guest-sdk/go
