//! Stack settings files, `Pulumi.<stack>.yaml` (`host/engine/src/config.rs`).

use std::sync::OnceLock;

use arbitrary::Unstructured;
use cairn_engine::config::StackConfigFile;
use cairn_engine::project::Project;
use cairn_fuzz_driver::{Outcome, Target};

use crate::generate::{self, TestCrypter};

pub const TARGET: Target = Target {
    name: "stack_config",
    about: "Pulumi.<stack>.yaml: to_yaml(parse(s)) parses to the same settings and prints the same; resolve/list/get --path never panic",
    run,
    seeds,
    dictionary: &[
        "config:\n  ",
        "encryptionsalt: ",
        "secretsprovider: ",
        "secure: ",
        "proj:",
        "aws:",
        "\n  ",
        "\n    ",
        "- ",
        ": ",
        "&a ",
        "*a",
        "'",
        "\"",
        "|\n",
        ">-\n",
        "~",
        "1.10",
        "0x1F",
        "01234",
        "true",
        "yes",
        "null",
        "#",
        "{}",
        "[]",
        "? ",
        "!!str ",
        "\\u0000",
    ],
    max_len: 2048,
};

fn seeds() -> Vec<Vec<u8>> {
    crate::seed_files("stack_config", &[])
}

fn project() -> &'static Project {
    static PROJECT: OnceLock<Project> = OnceLock::new();
    PROJECT.get_or_init(|| {
        let yaml = "name: proj\nruntime: nodejs\nconfig:\n  size:\n    type: integer\n    default: 3\n  tags:\n    type: array\n    items: {type: string}\n  token:\n    type: string\n    secret: true\n    default: d\n";
        Project::from_yaml(yaml, "Pulumi.yaml").unwrap_or_else(|e| panic!("{e}"))
    })
}

fn run(data: &[u8]) -> Outcome {
    let Ok(text) = std::str::from_utf8(data) else {
        return Outcome::Rejected;
    };
    let parsed = StackConfigFile::from_yaml(text, "Pulumi.dev.yaml");
    if let Ok(file) = &parsed {
        let written = file.to_yaml();
        let again = StackConfigFile::from_yaml(&written, "Pulumi.dev.yaml").unwrap_or_else(|e| {
            panic!("a parsed stack file is written as YAML that does not parse: {e}\n--- written:\n{written}")
        });
        assert_eq!(
            &again, file,
            "a stack file reads back differently after it is written:\n--- input:\n{text}\n--- written:\n{written}"
        );
        assert_eq!(
            again.to_yaml(),
            written,
            "writing a stack file is not a fixed point"
        );

        let crypter = TestCrypter;
        let p = project();
        let _ = file.resolve(Some(&crypter), p);
        let _ = file.list(p, Some(&crypter), true);
        let _ = file.list(p, None, false);
        let _ = file.list_json(p, Some(&crypter), true);
        for key in file.config.keys() {
            let _ = file.get(key, Some(&crypter));
        }
        // Paths typed by the user with `config get/set/rm --path`.
        let mut u = Unstructured::new(data);
        if let Ok(path) = generate::path(&mut u) {
            let path = format!("proj:{path}");
            let _ = file.get_path(&path, "proj", Some(&crypter));
            let huge = path.bytes().filter(u8::is_ascii_digit).count() > 3;
            if !huge {
                let mut copy = file.clone();
                if copy.set_path(&path, "v", false, None, "proj").is_ok() {
                    let written = copy.to_yaml();
                    let reread = StackConfigFile::from_yaml(&written, "Pulumi.dev.yaml")
                        .unwrap_or_else(|e| panic!("after set --path {path:?}: {e}\n{written}"));
                    assert_eq!(reread, copy, "after set --path {path:?}:\n{written}");
                }
                let _ = copy.remove_path(&path, "proj");
            }
        }
    }
    crate::outcome(&parsed)
}
