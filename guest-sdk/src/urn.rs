//! Reading URNs: `urn:pulumi:<stack>::<project>::<qualified type>::<name>`, where the qualified
//! type is the parent types and the resource's own, joined by `$`.

/// The parts of a URN after `urn:pulumi:`: stack, project, qualified type, name.
fn parts(urn: &str) -> Option<[&str; 4]> {
    let rest = urn.strip_prefix("urn:pulumi:")?;
    let mut it = rest.splitn(4, "::");
    let parts = [it.next()?, it.next()?, it.next()?, it.next()?];
    Some(parts)
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
        assert_eq!(name("urn:pulumi:dev::proj"), None);
    }
}
