// What the fake host knows and records, shared by the fake interfaces: logs, the requests a
// program made, the completions it has not collected, and the deployment it runs in.
export function reset() {
  globalThis.fake = {
    logs: [],
    requests: [],
    pending: [],
    outputs: [],
    nextHandle: 1,
    failures: {},
    deployment: { project: "proj", stack: "dev", organization: "org", dryRun: false, rootUrn: "urn:pulumi:dev::proj::pulumi:pulumi:Stack::proj-dev" },
    config: [],
    environment: [],
  };
  return globalThis.fake;
}

export function state() {
  return globalThis.fake ?? reset();
}
