// The ${PACKAGE} provider: Cairn loads it as a sandboxed WebAssembly component (built by
// `cairn up` with Cairn's TypeScript SDK) and calls it to check, create, update and delete the
// package's resources.
//
// It manages one resource type, `${PACKAGE}:index:Greeting` (its schema is in `cairn.json`):
// inputs `name` and `salutation`, output `message`. A greeting lives only in the stack's
// state; a real provider acts on a service in `create`, `update` and `delete`. Throw a
// `ProviderError` for an ordinary failure: the engine shows it as an error, never a crash.

import {
  type CheckRequest,
  type CheckResult,
  type CreateRequest,
  type CreateResult,
  type PropertyMap,
  type UpdateRequest,
  type UpdateResult,
  Checker,
  Provider,
  UNKNOWN,
  getString,
} from "cairn-sdk";

/** The resource's outputs for these (checked) inputs. In a preview an input may be unknown
 * (another resource's output), and so is the message then. */
function outputs(inputs: PropertyMap): PropertyMap {
  const salutation = getString(inputs, "salutation");
  const name = getString(inputs, "name");
  return {
    name: inputs.name ?? null,
    salutation: inputs.salutation ?? null,
    message: salutation !== undefined && name !== undefined ? `${salutation}, ${name}!` : UNKNOWN,
  };
}

class Greeter extends Provider {
  /** Validates the inputs and fills in defaults; failures name the property. */
  override check(r: CheckRequest): CheckResult {
    const checker = new Checker(r.inputs);
    checker.requiredString("name");
    checker.default("salutation", "Hello");
    if (checker.string("salutation")?.trim() === "") checker.fail("salutation", "must not be empty");
    return checker.finish();
  }

  create(r: CreateRequest): CreateResult {
    return { id: `greeting-${getString(r.inputs, "name")}`, outputs: outputs(r.inputs) };
  }

  /** A preview calls this instead of `create`: it describes the result and never acts. */
  override previewCreate(r: CreateRequest): CreateResult {
    return { id: "", outputs: outputs(r.inputs) };
  }

  update(r: UpdateRequest): UpdateResult {
    return { outputs: outputs(r.inputs) };
  }

  override previewUpdate(r: UpdateRequest): UpdateResult {
    return { outputs: outputs(r.inputs) };
  }

  delete(): void {}
}

export default new Greeter();
