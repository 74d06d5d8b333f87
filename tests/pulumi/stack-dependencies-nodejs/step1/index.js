// second's input is an output of first: second depends on first, first on nothing.
const pulumi = require("@pulumi/pulumi");

function providerOf(value) {
    return {
        async create(inputs) {
            return { id: "0", outs: { value } };
        },
    };
}

class FirstResource extends pulumi.dynamic.Resource {
    constructor(name) {
        super(providerOf(42), name, { value: undefined });
    }
}

class SecondResource extends pulumi.dynamic.Resource {
    constructor(name, dep) {
        super(providerOf(99), name, { dep });
    }
}

const first = new FirstResource("first");
first.value.apply((v) => console.log(`first.value: ${v}`));
const second = new SecondResource("second", first.value);
second.dep.apply((d) => console.log(`second.dep: ${d}`));
