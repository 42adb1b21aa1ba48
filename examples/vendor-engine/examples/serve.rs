//! The engine behind the subprocess protocol, so the `ge-conformance` command line can certify,
//! judge and promote against it: `ge-conformance certify --backend exec:target/debug/examples/serve`.

fn main() -> std::io::Result<()> {
    ge_conformance::protocol::serve(
        &vendor_engine::Engine::default(),
        std::io::stdin().lock(),
        std::io::stdout().lock(),
    )
}
