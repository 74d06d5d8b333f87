//! A real browser for the console's tests: Debian's headless Chromium driven over WebDriver by
//! its `chromedriver` (tests/run.sh installs both), through the `fantoccini` client.
//!
//! Pages are checked for what a person sees (text, elements, what a click shows); each check
//! polls with a deadline, never a fixed sleep. Screenshots go to `target/console-screenshots`.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use fantoccini::{Client, ClientBuilder, Locator};
use serde_json::{Value, json};

use crate::background::Background;
use crate::support::repo;

/// How long a page may take to show what a check waits for.
const PATIENCE: Duration = Duration::from_secs(60);

/// A headless Chromium session; the driver process stops when this is dropped.
pub struct Browser {
    runtime: tokio::runtime::Runtime,
    client: Client,
    _driver: Background,
}

/// Where a program is, if it is installed.
fn installed(names: &[&str]) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    names.iter().find_map(|name| {
        std::env::split_paths(&path)
            .map(|dir| dir.join(name))
            .find(|candidate| candidate.is_file())
    })
}

impl Browser {
    /// Starts `chromedriver` and a headless Chromium session with a 1400×900 window.
    pub fn start(dir: &Path) -> Browser {
        let driver_path = installed(&["chromedriver"]).expect(
            "chromedriver is not installed: tests/run.sh installs Debian's chromium-driver",
        );
        let chromium = installed(&["chromium", "chromium-browser", "google-chrome"])
            .expect("Chromium is not installed: tests/run.sh installs Debian's chromium");
        let port = free_port();
        let mut command = Command::new(driver_path);
        command.arg(format!("--port={port}"));
        let mut driver = Background::spawn(command, dir, "chromedriver");
        let address = format!("127.0.0.1:{port}");
        driver.wait_for("chromedriver to listen", PATIENCE, || {
            std::net::TcpStream::connect(&address).is_ok()
        });
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let mut capabilities = serde_json::Map::new();
        capabilities.insert(
            "goog:chromeOptions".into(),
            json!({
                "binary": chromium,
                "args": ["--headless=new", "--no-sandbox", "--disable-gpu",
                         "--disable-dev-shm-usage", "--window-size=1400,900",
                         "--no-first-run", "--no-default-browser-check"],
            }),
        );
        let client = runtime
            .block_on(
                ClientBuilder::new(hyper_util::client::legacy::connect::HttpConnector::new())
                    .capabilities(capabilities)
                    .connect(&format!("http://{address}")),
            )
            .expect("start a Chromium session");
        Browser {
            runtime,
            client,
            _driver: driver,
        }
    }

    pub fn goto(&self, url: &str) {
        self.runtime
            .block_on(self.client.goto(url))
            .expect("navigate");
    }

    /// Runs `script` (a function body; `arguments` holds `args`) in the page.
    pub fn eval(&self, script: &str, args: Vec<Value>) -> Value {
        self.runtime
            .block_on(self.client.execute(script, args))
            .unwrap_or_else(|e| panic!("running {script:?} in the page: {e}"))
    }

    /// The page's visible text.
    pub fn text(&self) -> String {
        self.eval("return document.body.innerText;", vec![])
            .as_str()
            .unwrap_or_default()
            .to_owned()
    }

    /// Waits until `check` holds of the page, or fails with the page's text and a screenshot.
    pub fn wait_until(&self, what: &str, check: impl Fn(&Browser) -> bool) {
        let deadline = Instant::now() + PATIENCE;
        while !check(self) {
            if Instant::now() > deadline {
                self.screenshot(&format!("failed-{}", what.replace(' ', "-")));
                panic!(
                    "the page never showed {what} within {PATIENCE:?}; it shows:\n{}",
                    self.text()
                );
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Waits for an element matching `css` whose text contains `text`.
    pub fn wait_for_text(&self, css: &str, text: &str) {
        self.wait_until(&format!("{text:?} in {css}"), |b| {
            b.eval(
                "return [...document.querySelectorAll(arguments[0])].some(e => e.textContent.includes(arguments[1]));",
                vec![json!(css), json!(text)],
            ) == json!(true)
        });
    }

    /// How many elements match `css`.
    pub fn count(&self, css: &str) -> usize {
        self.eval(
            "return document.querySelectorAll(arguments[0]).length;",
            vec![json!(css)],
        )
        .as_u64()
        .unwrap_or(0) as usize
    }

    /// Clicks the first element matching `css` (through WebDriver, as a person would).
    pub fn click(&self, css: &str) {
        self.runtime.block_on(async {
            let element = self
                .client
                .wait()
                .at_most(PATIENCE)
                .for_element(Locator::Css(css))
                .await
                .unwrap_or_else(|e| panic!("no element {css:?}: {e}"));
            element
                .click()
                .await
                .unwrap_or_else(|e| panic!("clicking {css:?}: {e}"));
        });
    }

    /// Saves a PNG of the window as `target/console-screenshots/<name>.png`.
    pub fn screenshot(&self, name: &str) -> PathBuf {
        let dir = repo().join("target/console-screenshots");
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(format!("{name}.png"));
        if let Ok(png) = self.runtime.block_on(self.client.screenshot()) {
            std::fs::write(&path, png).unwrap();
        }
        path
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        let client = self.client.clone();
        let _ = self.runtime.block_on(client.close());
    }
}

/// A port nothing listens on now.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}
