//! Typed resources of the `random` provider (examples/providers/random, the `random` package
//! 4.21.4) for Cairn programs.
//!
//! Hand-written for now (a later version generates them from the provider's schema). Each
//! resource is created with `Type::new(name, args, options)` and exposes its outputs as typed
//! [`Output`]s; `keepers` force a replacement (a new random value) when they change.
//!
//! ```text
//! let pet = RandomPet::new("name", RandomPetArgs::new().length(2), ResourceOptions::new());
//! ctx.export("name", pet.id); // the name is the resource's ID
//! let password = RandomPassword::new("db", RandomPasswordArgs::new(24), ResourceOptions::new());
//! ctx.export("password", password.result); // a secret
//! ```

use cairn_sdk::program::{Args, IntoInput, Output, Resource, ResourceOptions, custom};
use indexmap::IndexMap;

/// Keepers: arbitrary values whose change makes a new random value.
pub type Keepers = IndexMap<String, String>;

macro_rules! setters {
    ($args:ident { $($method:ident => $key:literal : $t:ty),* $(,)? }) => {
        impl $args {
            $(
                #[doc = concat!("Sets `", $key, "`.")]
                pub fn $method(self, value: impl IntoInput<Value = $t>) -> Self {
                    $args(self.0.set($key, value))
                }
            )*
        }
    };
}

/// Arguments of [`RandomString`] and [`RandomPassword`].
#[derive(Clone, Debug)]
pub struct RandomStringArgs(Args);

impl RandomStringArgs {
    /// A string of `length` characters.
    pub fn new(length: impl IntoInput<Value = i64>) -> Self {
        RandomStringArgs(Args::new().set("length", length))
    }
}

setters!(RandomStringArgs {
    lower => "lower": bool,
    upper => "upper": bool,
    numeric => "numeric": bool,
    special => "special": bool,
    min_lower => "minLower": i64,
    min_upper => "minUpper": i64,
    min_numeric => "minNumeric": i64,
    min_special => "minSpecial": i64,
    override_special => "overrideSpecial": String,
    keepers => "keepers": Keepers,
});

/// Arguments of [`RandomPassword`]: the same as a string's.
pub type RandomPasswordArgs = RandomStringArgs;

/// A random string (`random:index/randomString:RandomString`).
#[derive(Clone)]
pub struct RandomString {
    pub resource: Resource,
    pub result: Output<String>,
    pub length: Output<i64>,
}

impl RandomString {
    pub fn new(name: &str, args: RandomStringArgs, options: ResourceOptions) -> Self {
        let resource = custom("random:index/randomString:RandomString", name, args.0, options);
        RandomString {
            result: resource.get("result"),
            length: resource.get("length"),
            resource,
        }
    }
}

/// A random password (`random:index/randomPassword:RandomPassword`); its `result` is a secret.
#[derive(Clone)]
pub struct RandomPassword {
    pub resource: Resource,
    pub result: Output<String>,
    /// A bcrypt hash of the password (secret).
    pub bcrypt_hash: Output<String>,
    pub length: Output<i64>,
}

impl RandomPassword {
    pub fn new(name: &str, args: RandomPasswordArgs, options: ResourceOptions) -> Self {
        let resource = custom("random:index/randomPassword:RandomPassword", name, args.0, options);
        RandomPassword {
            result: resource.get("result"),
            bcrypt_hash: resource.get("bcryptHash"),
            length: resource.get("length"),
            resource,
        }
    }
}

/// Arguments of [`RandomInteger`].
#[derive(Clone, Debug)]
pub struct RandomIntegerArgs(Args);

impl RandomIntegerArgs {
    /// A whole number in `min..=max`.
    pub fn new(min: impl IntoInput<Value = i64>, max: impl IntoInput<Value = i64>) -> Self {
        RandomIntegerArgs(Args::new().set("min", min).set("max", max))
    }
}

setters!(RandomIntegerArgs {
    seed => "seed": String,
    keepers => "keepers": Keepers,
});

/// A random whole number (`random:index/randomInteger:RandomInteger`).
#[derive(Clone)]
pub struct RandomInteger {
    pub resource: Resource,
    pub result: Output<i64>,
}

impl RandomInteger {
    pub fn new(name: &str, args: RandomIntegerArgs, options: ResourceOptions) -> Self {
        let resource = custom("random:index/randomInteger:RandomInteger", name, args.0, options);
        RandomInteger {
            result: resource.get("result"),
            resource,
        }
    }
}

/// Arguments of [`RandomUuid`].
#[derive(Clone, Debug, Default)]
pub struct RandomUuidArgs(Args);

impl RandomUuidArgs {
    pub fn new() -> Self {
        RandomUuidArgs::default()
    }
}

setters!(RandomUuidArgs { keepers => "keepers": Keepers });

/// A random UUID v4 (`random:index/randomUuid:RandomUuid`).
#[derive(Clone)]
pub struct RandomUuid {
    pub resource: Resource,
    pub result: Output<String>,
}

impl RandomUuid {
    pub fn new(name: &str, args: RandomUuidArgs, options: ResourceOptions) -> Self {
        let resource = custom("random:index/randomUuid:RandomUuid", name, args.0, options);
        RandomUuid {
            result: resource.get("result"),
            resource,
        }
    }
}

/// Arguments of [`RandomPet`].
#[derive(Clone, Debug, Default)]
pub struct RandomPetArgs(Args);

impl RandomPetArgs {
    pub fn new() -> Self {
        RandomPetArgs::default()
    }
}

setters!(RandomPetArgs {
    length => "length": i64,
    separator => "separator": String,
    prefix => "prefix": String,
    keepers => "keepers": Keepers,
});

/// A random pet-style name such as `brave-otter` (`random:index/randomPet:RandomPet`); the
/// name is the resource's ID.
#[derive(Clone)]
pub struct RandomPet {
    pub resource: Resource,
    pub id: Output<String>,
}

impl RandomPet {
    pub fn new(name: &str, args: RandomPetArgs, options: ResourceOptions) -> Self {
        let resource = custom("random:index/randomPet:RandomPet", name, args.0, options);
        RandomPet {
            id: resource.id.clone(),
            resource,
        }
    }
}
