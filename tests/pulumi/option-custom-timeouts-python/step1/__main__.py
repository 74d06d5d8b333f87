"""Custom timeouts per operation, literal and from config; the state records them in seconds."""

import pulumi
from pulumi import CustomTimeouts, ResourceOptions

from conformance import SimpleResource

create_timeout = pulumi.Config().require("createTimeout")


def timeouts(**kw):
    return ResourceOptions(custom_timeouts=CustomTimeouts(**kw))


SimpleResource("noTimeouts", True)
SimpleResource("createOnly", True, timeouts(create="5m"))
SimpleResource("updateOnly", True, timeouts(update="10m"))
SimpleResource("deleteOnly", True, timeouts(delete="3m"))
SimpleResource("readOnly", True, timeouts(read="9m"))
SimpleResource("allTimeouts", True, timeouts(create="2m", update="4m", delete="1m", read="5m"))
SimpleResource("configTimeout", True, timeouts(create=create_timeout))
