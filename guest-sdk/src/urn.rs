//! Reading URNs: `urn:pulumi:<stack>::<project>::<qualified type>::<name>`, where the qualified
//! type is the parent types and the resource's own, joined by `$`.

/// The parts of a URN after `urn:pulumi:`: stack, project, qualified type, name.
fn parts(urn: &str) -> Option<[&str; 4]> {
    let rest = urn.strip_prefix("urn:pulumi:")?;
    let bytes = rest.as_bytes();
    let one = separator(bytes, 0)?;
    let two = separator(bytes, one + 2)?;
    let three = separator(bytes, two + 2)?;
    // `::` is ASCII, so every cut is on a character boundary.
    Some([
        &rest[..one],
        &rest[one + 2..two],
        &rest[two + 2..three],
        &rest[three + 2..],
    ])
}

/// The position of the first `::` at or after `from`: a byte scan, since a call's URN is read
/// on every `diff` and a substring search costs several times more in wasm.
fn separator(bytes: &[u8], from: usize) -> Option<usize> {
    let found = bytes
        .get(from..)?
        .windows(2)
        .position(|w| w[0] == b':' && w[1] == b':');
    found.map(|i| from + i)
}

/// The resource's own type token (`random:index:RandomPet`).
pub fn resource_type(urn: &str) -> Option<&str> {
    parts(urn)?[2].rsplit('$').next()
}

/// The resource's name (which may itself contain `::`).
pub fn name(urn: &str) -> Option<&str> {
    Some(parts(urn)?[3])
}

/// The stack the resource belongs to.
pub fn stack(urn: &str) -> Option<&str> {
    Some(parts(urn)?[0])
}

/// The project the resource belongs to.
pub fn project(urn: &str) -> Option<&str> {
    Some(parts(urn)?[1])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parts_of_a_urn() {
        let urn = "urn:pulumi:dev::proj::my:index:Comp$random:index:RandomPet::pet::one";
        assert_eq!(resource_type(urn), Some("random:index:RandomPet"));
        assert_eq!(name(urn), Some("pet::one"));
        assert_eq!(stack(urn), Some("dev"));
        assert_eq!(project(urn), Some("proj"));
        assert_eq!(
            resource_type("urn:pulumi:dev::proj::file:index:File::f"),
            Some("file:index:File")
        );
        assert_eq!(resource_type("not a urn"), None);
        // A run of colons splits at its first pair, as a substring search would.
        let colons = "urn:pulumi:a:::b::t::n";
        assert_eq!(project(colons), Some(":b"));
        assert_eq!(name("urn:pulumi:s::p::t::"), Some(""));
        assert_eq!(stack("urn:pulumi:::p::t::n"), Some(""));
        assert_eq!(name("urn:pulumi:dev::proj"), None);
    }
}
