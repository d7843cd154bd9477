//! Every `*.json` file under a directory, for the examples that read fixture sets.

use std::path::{Path, PathBuf};

/// Every `*.json` file under `dir`, at any depth, pushed onto `into`.
pub fn json_files(dir: &Path, into: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            json_files(&path, into);
        } else if path
            .extension()
            .is_some_and(|extension| extension == "json")
        {
            into.push(path);
        }
    }
}
