"""A resource that fails to delete, deleted with another: destroying the stack skips it."""

import pulumi

from testresources import FailsOnDelete, Random

rand = Random("random", length=10)
FailsOnDelete("failsondelete", opts=pulumi.ResourceOptions(deleted_with=rand))
