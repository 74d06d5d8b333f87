// Plain, secret and structured configuration, read as text and as objects.
const assert = require("assert");
const pulumi = require("@pulumi/pulumi");

const config = new pulumi.Config("config_basic_js");

assert.strictEqual(config.require("aConfigValue"), "this value is a value");
assert.strictEqual(config.require("bEncryptedSecret"), "this super secret is encrypted");

// Each structured value: its JSON text and the object.
const expected = {
    outer: [`{"inner":"value"}`, { inner: "value" }],
    names: [`["a","b","c","super secret name"]`, ["a", "b", "c", "super secret name"]],
    servers: [`[{"host":"example","port":80}]`, [{ host: "example", port: 80 }]],
    a: [`{"b":[{"c":true},{"c":false}]}`, { b: [{ c: true }, { c: false }] }],
    tokens: [`["shh"]`, ["shh"]],
    foo: [`{"bar":"don't tell"}`, { bar: "don't tell" }],
};
for (const [key, [text, obj]] of Object.entries(expected)) {
    assert.strictEqual(config.require(key), text, `${key}: not the expected JSON`);
    assert.deepStrictEqual(config.requireObject(key), obj, `${key}: not the expected object`);
}
