//go:build !wasip1

package cairn

import (
	"fmt"
	"os"
)

func hostLog(level Level, urn, message string) {
	names := [...]string{"debug", "info", "warning", "error"}
	name := "log"
	if int(level) < len(names) {
		name = names[level]
	}
	if urn != "" {
		fmt.Fprintf(os.Stderr, "[%s] %s: %s\n", name, urn, message)
		return
	}
	fmt.Fprintf(os.Stderr, "[%s] %s\n", name, message)
}
