module cairn.invalid/sdk

go 1.24
