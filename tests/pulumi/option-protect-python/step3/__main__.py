"""The protected resource back, its protection lifted by the program."""

from pulumi import ResourceOptions

from testresources import Echo

Echo("protected", echo=True, opts=ResourceOptions(protect=False))
Echo("unprotected", echo=True, opts=ResourceOptions(protect=False))
Echo("defaulted", echo=True)
