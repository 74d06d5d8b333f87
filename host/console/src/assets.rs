//! The page: one HTML file, one script, one style sheet, compiled into the binary (no network
//! at run time, nothing inline, so the Content-Security-Policy can forbid inline script).

use axum::Router;
use axum::routing::get;

use crate::asset_response;

const INDEX: &str = include_str!("../assets/index.html");
const SCRIPT: &str = include_str!("../assets/app.js");
const STYLE: &str = include_str!("../assets/app.css");
const ICON: &str = include_str!("../assets/icon.svg");

/// The routes of the page's files.
pub fn routes() -> Router {
    Router::new()
        .route("/", get(|| async { asset_response("index.html", INDEX) }))
        .route(
            "/app.js",
            get(|| async { asset_response("app.js", SCRIPT) }),
        )
        .route(
            "/app.css",
            get(|| async { asset_response("app.css", STYLE) }),
        )
        .route(
            "/icon.svg",
            get(|| async { asset_response("icon.svg", ICON) }),
        )
}
