// The WIT imports a Cairn TypeScript guest sees, as TypeScript modules: `cairn:deploy@0.3.0`
// (wit/provider.wit, wit/program.wit) and the few WASI 0.2.12 functions the SDK's file,
// environment and randomness helpers use.
//
// Generated first with `jco guest-types wit --world-name provider-world` (and
// `program-world`), then corrected by hand for the QuickJS runtime (componentize-qjs 0.4.5,
// `--sync`), whose conventions differ from jco's in places the SDK's tests pin down:
// * a lifted `list<u32>` is a plain `number[]` (only `list<u8>` becomes a `Uint8Array`); any
//   array-like is accepted when lowering, and the SDK sends `Uint32Array`s;
// * a lifted `option<T>` is `T | null`; `null` or `undefined` lower as `none`;
// * `u64` is a `number`, not a `bigint`;
// * a function returning `result<T, E>` returns `T` or throws; a thrown `Error` carries the
//   `E` in its `payload`, and a plain thrown object is the `E` itself (how the SDK returns a
//   `provider-error`).

type CairnOption<T> = T | null | undefined;

declare module "cairn:deploy/types@0.3.0" {
  export type AssetSource =
    | { tag: "text"; val: string }
    | { tag: "path"; val: string }
    | { tag: "uri"; val: string }
    | { tag: "hash-only" };
  export interface Asset {
    hash: CairnOption<string>;
    source: AssetSource;
  }
  export type ArchiveSource =
    | { tag: "assets"; val: Array<[string, number]> }
    | { tag: "path"; val: string }
    | { tag: "uri"; val: string }
    | { tag: "hash-only" };
  export interface Archive {
    hash: CairnOption<string>;
    source: ArchiveSource;
  }
  export interface ResourceReference {
    urn: string;
    id: CairnOption<number>;
    packageVersion: CairnOption<string>;
  }
  export interface OutputValue {
    value: CairnOption<number>;
    secret: boolean;
    dependencies: string[];
  }
  export type Extra =
    | { tag: "asset"; val: Asset }
    | { tag: "archive"; val: Archive }
    | { tag: "resource-reference"; val: ResourceReference }
    | { tag: "output"; val: OutputValue };
  /** The node table (see wit/provider.wit). */
  export interface Value {
    nodes: ArrayLike<number>;
    strings: Uint8Array;
    extras: Extra[];
  }
  export interface CheckFailure {
    property: string;
    reason: string;
  }
  export type DiffKind =
    | "add"
    | "add-replace"
    | "delete"
    | "delete-replace"
    | "update"
    | "update-replace";
  export interface PropertyDiff {
    path: string;
    kind: DiffKind;
    inputDiff: boolean;
  }
  export type DiffChanges = "unknown" | "none" | "some";
  export interface DiffResult {
    changes: DiffChanges;
    replaceKeys: string[];
    stableKeys: string[];
    changedKeys: string[];
    detailedDiff: CairnOption<PropertyDiff[]>;
    deleteBeforeReplace: boolean;
  }
  export interface CheckRequest {
    urn: string;
    olds: Value;
    news: Value;
    randomSeed: Uint8Array;
  }
  export interface CheckResult {
    inputs: Value;
    failures: CheckFailure[];
  }
  export interface DiffRequest {
    urn: string;
    id: string;
    oldInputs: Value;
    oldOutputs: Value;
    news: Value;
    ignoreChanges: string[];
  }
  export interface CreateRequest {
    urn: string;
    properties: Value;
    timeout: number;
    preview: boolean;
  }
  export interface CreateResult {
    id: string;
    outputs: Value;
  }
  export interface ReadRequest {
    urn: string;
    id: string;
    inputs: Value;
    state: Value;
  }
  export interface ReadResult {
    id: string;
    inputs: Value;
    outputs: Value;
  }
  export interface UpdateRequest {
    urn: string;
    id: string;
    oldInputs: Value;
    oldOutputs: Value;
    news: Value;
    timeout: number;
    ignoreChanges: string[];
    preview: boolean;
  }
  export interface UpdateResult {
    outputs: Value;
  }
  export interface DeleteRequest {
    urn: string;
    id: string;
    inputs: Value;
    outputs: Value;
    timeout: number;
  }
  export interface InvokeRequest {
    token: string;
    args: Value;
  }
  export interface InvokeResult {
    outputs: Value;
    failures: CheckFailure[];
  }
  export interface PropertyDependencies {
    property: string;
    urns: string[];
  }
  export interface CallRequest {
    token: string;
    args: Value;
    argDependencies: PropertyDependencies[];
    project: string;
    stack: string;
    dryRun: boolean;
  }
  export interface CallResult {
    outputs: Value;
    outputDependencies: PropertyDependencies[];
    failures: CheckFailure[];
  }
  export interface ConstructRequest {
    project: string;
    stack: string;
    resourceType: string;
    name: string;
    parent: CairnOption<string>;
    inputs: Value;
    inputDependencies: PropertyDependencies[];
    dependencies: string[];
    protect: boolean;
    providers: Array<[string, string]>;
    dryRun: boolean;
  }
  export interface ConstructResult {
    urn: CairnOption<string>;
    state: Value;
    stateDependencies: PropertyDependencies[];
  }
  export interface PartialState {
    id: string;
    inputs: Value;
    outputs: Value;
  }
  export interface Failure {
    message: string;
    partial: CairnOption<PartialState>;
  }
  export type ProviderError =
    | { tag: "failed"; val: Failure }
    | { tag: "unimplemented"; val: string }
    | { tag: "cancelled" }
    | { tag: "timeout"; val: number };
}

declare module "cairn:deploy/host@0.3.0" {
  export type Severity = "debug" | "info" | "warning" | "error";
  /** Structured logging, shown with the deployment's progress. */
  export function log(severity: Severity, urn: CairnOption<string>, message: string): void;
}

declare module "cairn:deploy/engine@0.3.0" {
  import type { PropertyDependencies, Value } from "cairn:deploy/types@0.3.0";
  export interface RegisterResourceRequest {
    resourceType: string;
    name: string;
    custom: boolean;
    parent: CairnOption<string>;
    inputs: Value;
    propertyDependencies: PropertyDependencies[];
    dependencies: string[];
    provider: CairnOption<string>;
    protect: boolean;
  }
  export interface RegisterResourceResponse {
    urn: string;
    id: CairnOption<string>;
    outputs: Value;
  }
  /** Throws an `Error` whose `payload` is the engine's message. */
  export function registerResource(request: RegisterResourceRequest): RegisterResourceResponse;
  export function registerResourceOutputs(urn: string, outputs: Value): void;
}

declare module "cairn:deploy/monitor@0.3.0" {
  import type { PropertyDependencies, Value } from "cairn:deploy/types@0.3.0";
  export type Handle = number;
  export interface CustomTimeouts {
    create: number;
    update: number;
    delete: number;
  }
  export interface Alias {
    urn: CairnOption<string>;
    name: CairnOption<string>;
    resourceType: CairnOption<string>;
    parentUrn: CairnOption<string>;
    noParent: boolean;
    stack: CairnOption<string>;
    project: CairnOption<string>;
  }
  export interface ResourceOptions {
    parent: CairnOption<string>;
    dependsOn: string[];
    protect: boolean;
    retainOnDelete: boolean;
    deletedWith: CairnOption<string>;
    provider: CairnOption<string>;
    providers: Array<[string, string]>;
    aliases: Alias[];
    ignoreChanges: string[];
    replaceOnChanges: string[];
    deleteBeforeReplace: CairnOption<boolean>;
    additionalSecretOutputs: string[];
    customTimeouts: CairnOption<CustomTimeouts>;
    importId: CairnOption<string>;
    version: CairnOption<string>;
  }
  export interface RegisterResourceRequest {
    resourceType: string;
    name: string;
    custom: boolean;
    remote: boolean;
    inputs: Value;
    propertyDependencies: PropertyDependencies[];
    options: ResourceOptions;
  }
  export interface ReadResourceRequest {
    resourceType: string;
    name: string;
    id: string;
    parent: CairnOption<string>;
    properties: Value;
    dependencies: string[];
    provider: CairnOption<string>;
    version: CairnOption<string>;
    additionalSecretOutputs: string[];
  }
  export interface InvokeRequest {
    token: string;
    args: Value;
    provider: CairnOption<string>;
    version: CairnOption<string>;
  }
  export interface CallRequest {
    token: string;
    args: Value;
    argDependencies: PropertyDependencies[];
    provider: CairnOption<string>;
    version: CairnOption<string>;
  }
  export interface ResourceState {
    urn: string;
    id: CairnOption<string>;
    outputs: Value;
    propertyDependencies: PropertyDependencies[];
  }
  export interface CallOutputs {
    outputs: Value;
    propertyDependencies: PropertyDependencies[];
  }
  export type Outcome =
    | { tag: "state"; val: ResourceState }
    | { tag: "outputs"; val: CallOutputs }
    | { tag: "failed"; val: string };
  export interface Completion {
    handle: Handle;
    outcome: Outcome;
  }
  export function registerResource(request: RegisterResourceRequest): Handle;
  export function readResource(request: ReadResourceRequest): Handle;
  export function invoke(request: InvokeRequest): Handle;
  export function call(request: CallRequest): Handle;
  /** Blocks until a request finished; empty at once when nothing is outstanding. */
  export function wait(): Completion[];
  /** Throws an `Error` whose `payload` is the host's message. */
  export function registerResourceOutputs(urn: string, outputs: Value): void;
}

declare module "cairn:deploy/context@0.3.0" {
  import type { Value } from "cairn:deploy/types@0.3.0";
  export interface DeploymentInfo {
    project: string;
    stack: string;
    organization: string;
    dryRun: boolean;
    rootUrn: string;
  }
  export function deployment(): DeploymentInfo;
  export function config(): Array<[string, Value]>;
}

// WASI: only what guest-sdk/typescript/src/wasi.ts calls. Errors are thrown `Error`s whose
// `payload` is the `error-code` case name (`no-entry`, `not-permitted`, …).
declare module "wasi:filesystem/types@0.2.12" {
  export type DescriptorType =
    | "unknown"
    | "block-device"
    | "character-device"
    | "directory"
    | "fifo"
    | "symbolic-link"
    | "regular-file"
    | "socket";
  export interface PathFlags {
    symlinkFollow?: boolean;
  }
  export interface OpenFlags {
    create?: boolean;
    directory?: boolean;
    exclusive?: boolean;
    truncate?: boolean;
  }
  export interface DescriptorFlags {
    read?: boolean;
    write?: boolean;
    mutateDirectory?: boolean;
  }
  export interface DescriptorStat {
    type: DescriptorType;
    size: number;
  }
  export interface DirectoryEntry {
    type: DescriptorType;
    name: string;
  }
  export class DirectoryEntryStream {
    readDirectoryEntry(): DirectoryEntry | null;
    [Symbol.dispose](): void;
  }
  export class Descriptor {
    openAt(
      pathFlags: PathFlags,
      path: string,
      openFlags: OpenFlags,
      flags: DescriptorFlags,
    ): Descriptor;
    /** Up to `length` bytes at `offset`, and whether the end was reached. */
    read(length: number, offset: number): [Uint8Array, boolean];
    /** Writes at `offset`; the number of bytes written. */
    write(buffer: Uint8Array, offset: number): number;
    stat(): DescriptorStat;
    statAt(pathFlags: PathFlags, path: string): DescriptorStat;
    createDirectoryAt(path: string): void;
    removeDirectoryAt(path: string): void;
    unlinkFileAt(path: string): void;
    readDirectory(): DirectoryEntryStream;
    [Symbol.dispose](): void;
  }
}

declare module "wasi:filesystem/preopens@0.2.12" {
  import type { Descriptor } from "wasi:filesystem/types@0.2.12";
  export function getDirectories(): Array<[Descriptor, string]>;
}

declare module "wasi:cli/environment@0.2.12" {
  export function getEnvironment(): Array<[string, string]>;
  export function getArguments(): string[];
}

declare module "wasi:random/random@0.2.12" {
  /** `length` cryptographically secure random bytes. */
  export function getRandomBytes(length: number): Uint8Array;
}

/** `console.*` writes to the host's log (installed by the SDK; QuickJS has no console). */
declare var console: {
  debug(...args: unknown[]): void;
  log(...args: unknown[]): void;
  info(...args: unknown[]): void;
  warn(...args: unknown[]): void;
  error(...args: unknown[]): void;
};
