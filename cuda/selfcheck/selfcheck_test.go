package selfcheck

import (
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/graphgram/graphgram/cuda"
)

// TestValidationCasesCPU checks the validation's fixed set without a device:
// its graphs are valid and the CPU computes every case to finite, nonzero
// Gram matrices; and without a usable device the validation fails saying so.
func TestValidationCasesCPU(t *testing.T) {
	t.Parallel()
	gs := validationGraphs()
	n := len(gs)
	matrices := 0
	for _, c := range validationCases(gs) {
		out := make([]float64, n*n)
		if err := c.cpu(out); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		for k, x := range out {
			if !(x > 0) || math.IsInf(x, 0) {
				t.Fatalf("%s: entry %d is %v", c.name, k, x)
			}
		}
		matrices += len(c.variants)
	}
	// 3 floating-point kernels in 2 precisions, 2 feature maps in 2 semirings.
	if matrices != 10 {
		t.Errorf("%d Gram matrices compared, want 10", matrices)
	}
	lib, err := cuda.Open("")
	if err != nil || lib.Check(0) != nil {
		if _, err := run(lib, 0, 0); err == nil || !strings.Contains(err.Error(), "failed on the device") {
			t.Errorf("no usable device: validation error %v", err)
		}
		o := NewRegistry().Validate(lib, 0)
		if o.State != Failed || !strings.Contains(o.Detail, "failed on the device") || !(o.Seconds > 0) {
			t.Errorf("no usable device: outcome %+v", o)
		}
	}
}

// TestOutcomeJSON: the form graphgram.devices() shows, both ways.
func TestOutcomeJSON(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		o    Outcome
		json string
	}{
		{Outcome{Passed, "10 Gram matrices agreed with the CPU", 0.5}, `{"state":"passed","detail":"10 Gram matrices agreed with the CPU","seconds":0.5}`},
		{Outcome{State: Failed, Detail: "lost"}, `{"state":"failed","detail":"lost","seconds":0}`},
	} {
		b, err := json.Marshal(c.o)
		if err != nil || string(b) != c.json {
			t.Errorf("%+v: %s %v, want %s", c.o, b, err, c.json)
		}
		var back Outcome
		if err := json.Unmarshal([]byte(c.json), &back); err != nil || back != c.o {
			t.Errorf("%s: %+v %v", c.json, back, err)
		}
	}
	if _, err := json.Marshal(Outcome{}); err == nil {
		t.Error("an outcome without a state marshals")
	}
	var o Outcome
	if err := json.Unmarshal([]byte(`{"state":"maybe"}`), &o); err == nil {
		t.Error(`state "maybe" unmarshals`)
	}
}

// TestRegistryRecord: a recorded outcome is looked up and replaces the
// validation; a failure is announced once, a pass never; outcomes are kept
// per library (nil and a zero cuda.Library stand for two libraries here)
// and device, and per registry.
func TestRegistryRecord(t *testing.T) {
	t.Parallel()
	var lib, other *cuda.Library = nil, new(cuda.Library)
	r := NewRegistry()
	if o, ok := r.Lookup(lib, 3); ok {
		t.Fatalf("fresh registry: %+v", o)
	}
	if r.Announce(lib, 3) {
		t.Error("announced an absent outcome")
	}
	r.Record(lib, 3, Outcome{State: Passed, Detail: "ok"})
	if r.Announce(lib, 3) {
		t.Error("announced a pass")
	}
	lost := Outcome{State: Failed, Detail: "device 3: cudaErrorLaunchTimeout"}
	r.Record(lib, 3, lost)
	if o, ok := r.Lookup(lib, 3); !ok || o != lost {
		t.Errorf("Lookup after Record: %+v %v", o, ok)
	}
	if o := r.Validate(lib, 3); o != lost {
		t.Errorf("Validate after Record: %+v (it must not run again)", o)
	}
	if !r.Announce(lib, 3) || r.Announce(lib, 3) {
		t.Error("a failure must be announced exactly once")
	}
	for _, c := range []struct {
		name   string
		r      *Registry
		lib    *cuda.Library
		device int
	}{
		{"another registry", NewRegistry(), lib, 3},
		{"another library", r, other, 3},
		{"another device", r, lib, 2},
	} {
		if o, ok := c.r.Lookup(c.lib, c.device); ok {
			t.Errorf("%s shares the outcome: %+v", c.name, o)
		}
		if c.r.Announce(c.lib, c.device) {
			t.Errorf("%s: announced a failure recorded elsewhere", c.name)
		}
	}
}
