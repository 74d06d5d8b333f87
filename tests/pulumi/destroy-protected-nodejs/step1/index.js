// Protected resources among unprotected ones: a protected leaf, a protected resource that
// depends on an unprotected one, an unprotected resource that depends on a protected one, and
// unrelated unprotected resources.
const { Resource } = require("./resource");

const base = new Resource("base", {});
const guarded = new Resource("guarded", { input: base.urn }, { protect: true });
new Resource("onGuarded", { input: guarded.urn });
new Resource("leaf", {}, { protect: true });
const free = new Resource("free", {});
new Resource("onFree", { input: free.urn });
