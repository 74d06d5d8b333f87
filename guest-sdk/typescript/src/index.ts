// cairn-sdk for TypeScript: Cairn providers and programs as WebAssembly components (built by
// `cairn up` with componentize-qjs; see README.md). The same concepts as the Rust SDK
// (`cairn-sdk`) and the Python SDK: a provider implements check / diff / create / read /
// update / delete on plain property values (and construct / call for components), and ordinary
// failures are the WIT's errors, never traps; a program declares resources whose outputs are
// `Output<T>`s. Both may be `async`: the SDK brings its own promises (promise.ts).

export {
  Archive,
  Asset,
  Kind,
  MAX_DEPTH,
  MalformedValue,
  OutputValue,
  ResourceReference,
  Secret,
  UNKNOWN,
  Unknown,
  containsSecrets,
  containsUnknowns,
  decode,
  decodeMap,
  emptyMap,
  emptyTable,
  encode,
  isMap,
  kindOf,
  reveal,
  sameAs,
  unsecret,
  utf8Decode,
  utf8Encode,
} from "./values";
export type { PropertyMap, Value } from "./values";
export {
  CheckFailure,
  Checker,
  autoName,
  get,
  getArray,
  getBoolean,
  getInteger,
  getNumber,
  getObject,
  getString,
  isUnknown,
  lookup,
  parsePath,
  requireBoolean,
  requireInteger,
  requireNumber,
  requireObject,
  requireString,
} from "./check";
export type { Lookup } from "./check";
export {
  Provider,
  ProviderError,
  diffInputs,
  exportProvider,
  manifest,
  nameOf,
  resourceTypeOf,
} from "./provider";
export type {
  Awaitable,
  CallRequest,
  CallResult,
  CheckRequest,
  CheckResult,
  ConstructRequest,
  ConstructResult,
  CreateRequest,
  CreateResult,
  DeleteRequest,
  Dependencies,
  DiffChanges,
  DiffKind,
  DiffRequest,
  DiffResult,
  InvokeRequest,
  InvokeResult,
  PartialState,
  PropertyDiff,
  ReadRequest,
  ReadResult,
  UpdateRequest,
  UpdateResult,
} from "./provider";
export * as engine from "./engine";
export type { RegisterResource, Registered } from "./engine";
export { log, installConsole } from "./log";
export { Output, all, concat, interpolate, output, secret } from "./output";
export type { Input, Unwrap } from "./output";
export {
  ComponentResource,
  Config,
  Context,
  CustomResource,
  ProviderResource,
  Resource,
  StackReference,
  UNKNOWN_ID,
  call,
  exportProgram,
  getOrganization,
  getProject,
  getStack,
  invoke,
  invokeAsync,
  isDryRun,
  readResource,
} from "./program";
export type {
  Alias,
  CustomTimeouts,
  InvokeOptions,
  MainResult,
  ResourceOptions,
  TransformArgs,
  Transformation,
} from "./program";
export * as fs from "./wasi";
export { env, FileError, random } from "./wasi";
export { HttpError, HttpResponse, fetch, http, type HttpRequest } from "./http";
