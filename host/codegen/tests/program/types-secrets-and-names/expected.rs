use cairn_sdk::program::{Args, ResourceOptions, custom};
use cairn_sdk::{Archive, Asset, Value, props, secret};

let class = custom(
    "demo:storage/bucket:Bucket",
    "logs-bucket",
    Args::new()
        .set("bucketName", "logs")
        .set("bundle", Value::from(Archive::from_path("./site")))
        .set("class", "STANDARD")
        .set("index", Value::from(Asset::from_text("<h1>x</h1>")))
        .set("meta", Value::Object(props! {
            "nested" => Value::Object(props! {
                "list" => Value::Array(vec![Value::from(1_i64), Value::from("two"), Value::Null]),
            }),
        }))
        .set("password", secret(Value::from("hunter2")))
        .set("ratio", 0.25_f64)
        .set("required", Value::Object(props! {
            "enabled" => Value::from(false),
            "maxAge" => Value::from(0_i64),
        }))
        .set("rules", Value::Array(vec![
            Value::Object(props! {
                "enabled" => Value::from(true),
                "maxAge" => Value::from(30_i64),
                "prefix" => Value::from("tmp/"),
            }),
            Value::Object(props! {
                "enabled" => Value::from(false),
                "maxAge" => Value::from(1.5_f64),
            }),
        ]))
        .set("size", "large")
        .set("tags", Value::Object(props! {
            "team" => Value::from("infra"),
            "cost-center" => Value::from("42"),
        }))
        .set("tier", "hot"),
    ResourceOptions::new().protect(true),
);

let class2 = custom(
    "demo:storage/bucket:Bucket",
    "class_",
    Args::new()
        .set("bucketName", "second")
        .set("required", Value::Object(props! {
            "enabled" => Value::from(false),
            "maxAge" => Value::from(0_i64),
        }))
        .set("tier", "hot"),
    ResourceOptions::new(),
);
