package microkernel_test

import (
	"fmt"
	"log"

	"github.com/graphgram/graphgram/gokernel/microkernel"
)

// A base kernel from its JSON expression (docs/abi.md): an exact match on
// column 0, softened to 0.5 for different values, times a Gaussian on
// column 1; then its value and gradient on two feature rows.
func ExampleParse() {
	k, err := microkernel.Parse(`{"kind":"product","terms":[
		{"kind":"kronecker_delta","h":0.5,"col":0},
		{"kind":"square_exponential","length_scale":2,"col":1}]}`)
	if err != nil {
		log.Fatal(err)
	}
	x, y := []float64{6, 1.0}, []float64{8, 2.0}
	grad := make([]float64, k.NumParams())
	v := k.EvalGrad(x, y, grad)
	fmt.Printf("k(x, y) = %.6f, k(x, x) = %.6f\n", k.Eval(x, y), k.Eval(x, x))
	fmt.Printf("%d parameters, value %.6f, gradient %.6f\n", k.NumParams(), v, grad)
	// Output:
	// k(x, y) = 0.441248, k(x, x) = 1.000000
	// 2 parameters, value 0.441248, gradient [0.882497 0.055156]
}
