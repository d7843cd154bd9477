//! The binary embeds the browser bundle and the migrations. Rebuild when either
//! changes, and say clearly how to produce the bundle when it is missing.

use std::path::Path;

fn main() {
    println!("cargo:rerun-if-changed=../migrations");
    println!("cargo:rerun-if-changed=../target/site");
    let wasm = Path::new("../target/site/pkg/switchback_bg.wasm");
    if !wasm.exists() {
        panic!(
            "the web app bundle is missing ({}): run `scripts/build-site` first \
             (scripts/run and scripts/test do this for you)",
            wasm.display()
        );
    }
}
