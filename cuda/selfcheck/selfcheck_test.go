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
	if cuda.Check(0) != nil {
		if _, err := run(0, 0); err == nil || !strings.Contains(err.Error(), "failed on the device") {
			t.Errorf("no usable device: validation error %v", err)
		}
		o := NewRegistry().Validate(0)
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
// validation; a failure is announced once, a pass never.
func TestRegistryRecord(t *testing.T) {
	t.Parallel()
	r := NewRegistry()
	if o, ok := r.Lookup(3); ok {
		t.Fatalf("fresh registry: %+v", o)
	}
	if r.Announce(3) {
		t.Error("announced an absent outcome")
	}
	r.Record(3, Outcome{State: Passed, Detail: "ok"})
	if r.Announce(3) {
		t.Error("announced a pass")
	}
	lost := Outcome{State: Failed, Detail: "device 3: cudaErrorLaunchTimeout"}
	r.Record(3, lost)
	if o, ok := r.Lookup(3); !ok || o != lost {
		t.Errorf("Lookup after Record: %+v %v", o, ok)
	}
	if o := r.Validate(3); o != lost {
		t.Errorf("Validate after Record: %+v (it must not run again)", o)
	}
	if !r.Announce(3) || r.Announce(3) {
		t.Error("a failure must be announced exactly once")
	}
	if _, ok := NewRegistry().Lookup(3); ok {
		t.Error("registries share outcomes")
	}
}
