// Transforms: on a custom resource, through a component to its children, for the whole stack,
// in order of specificity, changing properties, providers (of a custom resource and of a remote
// component) and the import ID, and on invokes.
const pulumi = require("@pulumi/pulumi");
const { Component, Provider, Random } = require("./testprovider");

const RANDOM = "testprovider:index:Random";

class Pair extends pulumi.ComponentResource {
    constructor(name, opts) {
        super("my:component:MyComponent", name, {}, opts);
        this.child = new Random(`${name}-child`, { length: 5 }, {
            parent: this,
            additionalSecretOutputs: ["length"],
        });
        this.registerOutputs({});
    }
}

const secretResult = async ({ props, opts }) => ({
    props,
    opts: pulumi.mergeOptions(opts, { additionalSecretOutputs: ["result"] }),
});

// 1. A transform of a custom resource.
new Random("res1", { length: 5 }, { transforms: [secretResult] });

// 2. A component's transform reaches its children.
new Pair("res2", {
    transforms: [
        async ({ type, props, opts }) => {
            if (type === RANDOM) {
                return {
                    props: { prefix: "newDefault", ...props },
                    opts: pulumi.mergeOptions(opts, { additionalSecretOutputs: ["result"] }),
                };
            }
        },
    ],
});

// 3. A stack transform reaches every resource registered after it.
pulumi.runtime.registerStackTransform(async ({ type, props, opts }) => {
    if (type === RANDOM) {
        return {
            props: { ...props, prefix: "stackDefault" },
            opts: pulumi.mergeOptions(opts, { additionalSecretOutputs: ["result"] }),
        };
    }
});

new Random("res3", { length: pulumi.secret(5) });

// 4. Own, then the parents' (in the order given), then the stack's: the stack's prefix wins.
const prefix = (value) => async ({ type, props, opts }) => {
    if (type === RANDOM) {
        return { props: { ...props, prefix: value }, opts };
    }
};
new Pair("res4", { transforms: [prefix("default1"), prefix("default2")] });

// 5. A transform changes a property.
new Random("res5", { length: 10 }, {
    transforms: [
        async ({ type, props, opts }) => {
            if (type === RANDOM) {
                props["length"] = props["length"] * 2;
                return { props, opts };
            }
        },
    ],
});

// 6 and 7. A transform changes the provider of a custom resource and of a remote component.
const first = new Provider("provider1");
const second = new Provider("provider2");
const toSecond = async ({ props, opts }) => ({
    props,
    opts: pulumi.mergeOptions(opts, { provider: second }),
});
const res6 = new Random("res6", { length: 10 }, { provider: first, transforms: [toSecond] });
new Component("res7", { length: 10 }, { provider: first, transforms: [toSecond] });
// (The original checks res6's provider in the state; its ID is not known here, so the program
// asks the engine for res6's state instead.)
res6.urn.apply(async (urn) => {
    const state = await pulumi.runtime.invoke("pulumi:pulumi:getResource", { urn });
    if (!state.provider.includes("::provider2::")) {
        throw new Error(`res6 is not managed by provider2: ${state.provider}`);
    }
});

// 8. An invoke transform changes an invoke's arguments.
pulumi.runtime.registerInvokeTransform(async ({ token, args, opts }) => ({
    args: { ...args, length: 11 },
    opts,
}));
const res8 = new Random("res8", { length: pulumi.secret(5) });
res8.returnArgs({ length: 10, prefix: "test" }).then((answer) => {
    if (answer.length !== 11 || answer.prefix !== "test") {
        throw new Error(`the invoke transform did not run: ${JSON.stringify(answer)}`);
    }
});

// 9. A transform sets the import ID.
new Random("res9", { length: 7 }, {
    transforms: [
        async ({ props, opts }) => ({
            props,
            opts: pulumi.mergeOptions(opts, { import: "stackDefault:test-id" }),
        }),
    ],
});
