"""Three resources of the default provider: protected, explicitly unprotected, and unprotected
by default."""

from pulumi import ResourceOptions

from testresources import Echo

Echo("protected", echo=True, opts=ResourceOptions(protect=True))
Echo("unprotected", echo=True, opts=ResourceOptions(protect=False))
Echo("defaulted", echo=True)
