//! The macros' accepted forms: every case under `tests/ui/pass/` must compile and run.
//!
//! Each case is a module of this test binary, its `main` run as a test, so the cases
//! compile against the workspace's own build of the dependencies, in one link. Through
//! trybuild (`tests/ui.rs`, which keeps the compile-fail cases and the one case that needs
//! a crate root of its own) each would be a project binary of its own: a build, a link and
//! a run per case, which was most of the suite's time.

macro_rules! pass_cases {
    ($($case:ident = $path:literal,)*) => {
        $(
            // The cases are fixtures written as crate roots (trybuild's form): lints about
            // items they declare but do not use, or declare `pub` at their root, do not
            // apply.
            #[allow(dead_code, unused_imports, unreachable_pub, clippy::all)]
            #[path = $path]
            mod $case;

            #[test]
            fn $case() {
                $case::main();
            }
        )*

        /// Every case file is listed above.
        #[test]
        fn every_pass_case_is_listed() {
            let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/ui/pass");
            let mut on_disk: Vec<String> = std::fs::read_dir(&dir)
                .unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.display()))
                .filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|name| name.ends_with(".rs"))
                .map(|name| format!("ui/pass/{name}"))
                .collect();
            on_disk.sort();
            let mut listed = vec![$($path.to_string()),*];
            listed.sort();
            assert_eq!(listed, on_disk, "add each case in tests/ui/pass/ to `pass_cases!` in tests/pass.rs");
        }
    };
}

pass_cases! {
    derive_enums = "ui/pass/derive_enums.rs",
    derive_schema_keys = "ui/pass/derive_schema_keys.rs",
    derive_structs = "ui/pass/derive_structs.rs",
    tool_all_keys = "ui/pass/tool_all_keys.rs",
    tool_args_struct = "ui/pass/tool_args_struct.rs",
    tool_arguments_section = "ui/pass/tool_arguments_section.rs",
    tool_params = "ui/pass/tool_params.rs",
    tool_plain_return = "ui/pass/tool_plain_return.rs",
    tool_portable_examples = "ui/pass/tool_portable_examples.rs",
    tool_struct_name = "ui/pass/tool_struct_name.rs",
    tool_toolbox = "ui/pass/tool_toolbox.rs",
}
