package tudataset

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"strings"
)

// table is a parsed file: rows of float64 values, each with its line number.
type table struct {
	path string
	rows [][]float64
}

// readTable parses a comma-separated file of numbers. missing reports whether
// the file does not exist (not an error for optional files).
func readTable(path string) (t table, missing bool, err error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return t, true, nil
	}
	if err != nil {
		return t, false, err
	}
	defer f.Close()
	t.path = path
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<16), 1<<24)
	line := 0
	for sc.Scan() {
		line++
		s := strings.TrimSpace(sc.Text())
		if s == "" {
			// A blank line would shift every later row onto the wrong node,
			// except trailing ones, which are tolerated below.
			t.rows = append(t.rows, nil)
			continue
		}
		fields := strings.Split(s, ",")
		row := make([]float64, len(fields))
		for k, field := range fields {
			field = strings.TrimSpace(field)
			x, err := strconv.ParseFloat(field, 64)
			if err != nil {
				return t, false, fmt.Errorf("%s:%d: field %d: %q is not a number", path, line, k+1, field)
			}
			row[k] = x
		}
		t.rows = append(t.rows, row)
	}
	if err := sc.Err(); err != nil {
		return t, false, fmt.Errorf("%s: %w", path, err)
	}
	for len(t.rows) > 0 && t.rows[len(t.rows)-1] == nil {
		t.rows = t.rows[:len(t.rows)-1]
	}
	for i, r := range t.rows {
		if r == nil {
			return t, false, fmt.Errorf("%s:%d: empty line", path, i+1)
		}
	}
	return t, false, nil
}

// check verifies that t has want rows of width columns (width 0: any constant
// width) and returns the width.
func (t *table) check(want, width int, what string) (int, error) {
	if len(t.rows) != want {
		return 0, fmt.Errorf("%s: %d lines, want one per %s (%d)", t.path, len(t.rows), what, want)
	}
	if width == 0 && len(t.rows) > 0 {
		width = len(t.rows[0])
	}
	for i, r := range t.rows {
		if len(r) != width {
			return 0, fmt.Errorf("%s:%d: %d values, want %d", t.path, i+1, len(r), width)
		}
	}
	return width, nil
}

// integral returns x as an int if it is a whole number.
func integral(x float64, path string, line int) (int, error) {
	i := int(x)
	if float64(i) != x {
		return 0, fmt.Errorf("%s:%d: %v is not an integer", path, line, x)
	}
	return i, nil
}
