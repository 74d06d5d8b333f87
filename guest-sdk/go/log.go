package cairn

// Level is how severe a log message is.
type Level uint8

// The levels (the WIT host `severity` cases, in order).
const (
	Debug Level = iota
	Info
	Warning
	Error
)

// Log sends a message to the deployment's progress display, about the resource urn ("" for
// the component as a whole). Outside a component (native unit tests) it goes to stderr.
func Log(level Level, urn, message string) { hostLog(level, urn, message) }

// LogDebug logs at debug level.
func LogDebug(urn, message string) { Log(Debug, urn, message) }

// LogInfo logs at info level.
func LogInfo(urn, message string) { Log(Info, urn, message) }

// LogWarning logs at warning level.
func LogWarning(urn, message string) { Log(Warning, urn, message) }

// LogError logs at error level.
func LogError(urn, message string) { Log(Error, urn, message) }
