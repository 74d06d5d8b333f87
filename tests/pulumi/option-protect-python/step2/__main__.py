"""The protected resource leaves the program: the update must refuse to delete it."""

from pulumi import ResourceOptions

from testresources import Echo

Echo("unprotected", echo=True, opts=ResourceOptions(protect=False))
Echo("defaulted", echo=True)
