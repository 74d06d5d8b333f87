// What the fake host knows and records, shared by the fake interfaces: logs, the requests a
// program made (and those a provider's construct made of the engine), the completions it has
// not collected, and the deployment it runs in.
export function reset() {
  globalThis.fake = {
    logs: [],
    requests: [],
    engine: [],
    pending: [],
    outputs: [],
    nextHandle: 1,
    failures: {},
    callDependencies: [],
    deployment: { project: "proj", stack: "dev", organization: "org", dryRun: false, rootUrn: "urn:pulumi:dev::proj::pulumi:pulumi:Stack::proj-dev" },
    config: [],
    environment: [],
  };
  return globalThis.fake;
}

export function state() {
  return globalThis.fake ?? reset();
}
