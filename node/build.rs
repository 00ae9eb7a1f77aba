//! napi-rs's build step: the link arguments a Node addon needs on each platform.

fn main() {
    napi_build::setup();
}
