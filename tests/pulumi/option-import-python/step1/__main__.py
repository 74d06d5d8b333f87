"""One resource imported by ID (the `import` option), one created."""

from pulumi import ResourceOptions

from testresources import Random

# The ID `fakeID123` reads as a Random of length 9 without a prefix.
Random("import", length=9, prefix="", opts=ResourceOptions(import_="fakeID123"))
Random("notImport", length=9, prefix="")
