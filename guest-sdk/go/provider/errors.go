package provider

import (
	"errors"
	"fmt"

	cairn "cairn.invalid/sdk"
)

// PartialState is what an operation that partly succeeded left behind (created but not
// healthy, say): the engine records it so the resource is not leaked.
type PartialState struct {
	ID      string
	Inputs  *cairn.PropertyMap
	Outputs *cairn.PropertyMap
}

// FailedError is a failure that left a resource behind; see Partial.
type FailedError struct {
	Message string
	State   PartialState
}

func (e *FailedError) Error() string { return e.Message }

// Partial is a failure that left the resource state behind.
func Partial(message string, state PartialState) error {
	return &FailedError{Message: message, State: state}
}

// UnimplementedError says the provider does not implement a method.
type UnimplementedError struct {
	// Method is the WIT name (`construct`, `invoke`, `call`, …).
	Method string
}

func (e *UnimplementedError) Error() string {
	return "the provider does not implement " + e.Method
}

// Unimplemented is the error of a method the provider does not implement.
func Unimplemented(method string) error { return &UnimplementedError{Method: method} }

// ErrCancelled is the error of an operation that was cancelled.
var ErrCancelled = errors.New("the operation was cancelled")

// TimeoutError says an operation did not finish in time.
type TimeoutError struct{ Seconds float64 }

func (e *TimeoutError) Error() string {
	return fmt.Sprintf("the operation did not finish within %v s", e.Seconds)
}

// Timeout is the error of an operation that did not finish within seconds.
func Timeout(seconds float64) error { return &TimeoutError{Seconds: seconds} }

// errorCase is how an error reaches the WIT: which provider-error case, and its payload.
type errorCase struct {
	kind    uint8 // 0 failed, 1 unimplemented, 2 cancelled, 3 timeout
	message string
	partial *PartialState
	seconds float64
}

func classify(err error) errorCase {
	var failed *FailedError
	var unimplemented *UnimplementedError
	var timeout *TimeoutError
	switch {
	case errors.As(err, &failed):
		state := failed.State
		return errorCase{kind: 0, message: err.Error(), partial: &state}
	case errors.As(err, &unimplemented):
		return errorCase{kind: 1, message: unimplemented.Method}
	case errors.Is(err, ErrCancelled):
		return errorCase{kind: 2}
	case errors.As(err, &timeout):
		return errorCase{kind: 3, seconds: timeout.Seconds}
	}
	return errorCase{kind: 0, message: err.Error()}
}
