import pulumi

greeter = pulumi.ComponentResource(
    "greeter:index:Greeter", "hi", {"greeting": "hey", "message": None}, remote=True
)
shouted = pulumi.runtime.invoke("greeter:index:shout", {"text": "quiet"})
pulumi.export("message", greeter.message)
pulumi.export("shouted", shouted.value["text"])
