//! Scaffolding the engine's integration tests share: a provider whose creates and deletes run a
//! hook the test chooses, its loader, a crypter that keeps plaintext, and a program that
//! declares N independent resources at once.

use std::sync::Arc;

use async_trait::async_trait;
use cairn_engine::deploy::monitor::Monitor;
use cairn_engine::deploy::program::{Program, ProgramError, RegisterResourceRequest};
use cairn_engine::deploy::provider::{
    CheckRequest, CheckResult, CreateRequest, CreateResult, DeleteRequest, DiffChanges,
    DiffRequest, DiffResult, LoadError, NativePlugins, Provider, ProviderError, ProviderLoader,
    ReadRequest, ReadResult, UpdateRequest, UpdateResult,
};
use cairn_engine::secrets::{Crypter, SecretsError};
use cairn_engine::value::PropertyMap;
use cairn_engine::{TypeToken, props};
use futures::future::{BoxFuture, try_join_all};

/// What a [`Hooked`] provider runs in each create and delete.
pub type Hook = Box<dyn Fn() -> BoxFuture<'static, ()> + Send + Sync>;

/// A provider of package `test` whose check and diff answer at once (no changes) and whose
/// creates and deletes run `hook` first.
pub struct Hooked {
    pub hook: Hook,
}

#[async_trait]
impl Provider for Hooked {
    fn package(&self) -> &str {
        "test"
    }
    async fn configure(&self, _: PropertyMap, _: bool) -> Result<(), ProviderError> {
        Ok(())
    }
    async fn check(&self, r: CheckRequest<'_>) -> Result<CheckResult, ProviderError> {
        Ok(CheckResult {
            inputs: r.news.clone(),
            failures: vec![],
        })
    }
    async fn diff(&self, _: DiffRequest<'_>) -> Result<DiffResult, ProviderError> {
        Ok(DiffResult {
            changes: DiffChanges::None,
            ..DiffResult::default()
        })
    }
    async fn create(&self, r: CreateRequest) -> Result<CreateResult, ProviderError> {
        (self.hook)().await;
        Ok(CreateResult {
            id: r.urn.name().to_owned(),
            outputs: r.properties,
        })
    }
    async fn read(&self, r: ReadRequest) -> Result<ReadResult, ProviderError> {
        Ok(ReadResult {
            id: r.id,
            inputs: r.inputs,
            outputs: r.state,
        })
    }
    async fn update(&self, r: UpdateRequest) -> Result<UpdateResult, ProviderError> {
        Ok(UpdateResult { outputs: r.news })
    }
    async fn delete(&self, _: DeleteRequest) -> Result<(), ProviderError> {
        (self.hook)().await;
        Ok(())
    }
}

/// Loads the one provider for every package.
pub struct Loader(pub Arc<dyn Provider>);

#[async_trait]
impl ProviderLoader for Loader {
    async fn load(
        &self,
        _: &str,
        _: Option<&semver::Version>,
        _: NativePlugins,
    ) -> Result<Arc<dyn Provider>, LoadError> {
        Ok(self.0.clone())
    }
}

/// Keeps secrets as they are (the tests store no state on disk).
pub struct Plain;

impl Crypter for Plain {
    fn encrypt(&self, plaintext: &str) -> Result<String, SecretsError> {
        Ok(plaintext.to_owned())
    }
    fn decrypt(&self, ciphertext: &str) -> Result<String, SecretsError> {
        Ok(ciphertext.to_owned())
    }
}

/// Declares `n` independent resources of type `test:index:Thing` at once.
pub struct Fleet(pub usize);

#[async_trait]
impl Program for Fleet {
    async fn run(&self, monitor: Monitor) -> Result<(), ProgramError> {
        let token = TypeToken::parse("test:index:Thing").unwrap();
        try_join_all((0..self.0).map(|i| {
            let request = RegisterResourceRequest::custom(
                token.clone(),
                format!("thing-{i}"),
                props! { "n" => i as i64 },
            );
            let monitor = monitor.clone();
            async move { monitor.register_resource(request).await }
        }))
        .await?;
        Ok(())
    }
}
