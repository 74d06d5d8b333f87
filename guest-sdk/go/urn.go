package cairn

import "strings"

// URN parts: `urn:pulumi:<stack>::<project>::<qualified type>::<name>`, where the qualified
// type is the parent types and the resource's own, joined by `$`.
func urnParts(urn string) ([4]string, bool) {
	rest, ok := strings.CutPrefix(urn, "urn:pulumi:")
	if !ok {
		return [4]string{}, false
	}
	var parts [4]string
	for i := 0; i < 3; i++ {
		at := strings.Index(rest, "::")
		if at < 0 {
			return [4]string{}, false
		}
		parts[i], rest = rest[:at], rest[at+2:]
	}
	// The name is the rest, `::` included.
	parts[3] = rest
	return parts, true
}

// URNType is the resource's own type token (`random:index:RandomPet`); "" for a malformed URN.
func URNType(urn string) string {
	parts, ok := urnParts(urn)
	if !ok {
		return ""
	}
	qualified := parts[2]
	return qualified[strings.LastIndexByte(qualified, '$')+1:]
}

// URNName is the resource's name (which may itself contain `::`); "" for a malformed URN.
func URNName(urn string) string {
	parts, _ := urnParts(urn)
	return parts[3]
}

// URNStack is the stack the resource belongs to.
func URNStack(urn string) string {
	parts, _ := urnParts(urn)
	return parts[0]
}

// URNProject is the project the resource belongs to.
func URNProject(urn string) string {
	parts, _ := urnParts(urn)
	return parts[1]
}
