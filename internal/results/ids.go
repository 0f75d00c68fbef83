package results

import (
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
)

// idForm is what a run's or a reproduction's id is, as arena makes them
// (20261125-101500-sleep, reproduce-20261123-093000, -2 after a taken one) and as --id and
// the CI action name them (ci-<run>-<attempt>-<job>): letters, digits, '.', '_' and '-', a
// letter or digit first, at most 100. An id names a folder, so none can be a path: no
// separator, never "." or "..", never absolute.
var idForm = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$`)

// CheckID refuses id unless it has the id form: every id read from a file (results.json's,
// a reproduction's, a step's run) passes here before it names anything.
func CheckID(id string) error {
	if !idForm.MatchString(id) {
		return fmt.Errorf("id %q: not a run's id (letters, digits, '.', '_' or '-', a letter or digit first, at most 100)", id)
	}
	return nil
}

// In joins name onto dir, refusing a name that would leave it (filepath.IsLocal: absolute,
// "..", empty): where a name read from a file meets the disk.
func In(dir, name string) (string, error) {
	if !filepath.IsLocal(name) {
		return "", fmt.Errorf("%q is not a name inside %s", name, dir)
	}
	return filepath.Join(dir, name), nil
}

// RunDir is the folder of the run id in dir (a runs folder, a reproduction's): id checked
// against the id form, and the join checked to stay in dir.
func RunDir(dir, id string) (string, error) {
	if err := CheckID(id); err != nil {
		return "", err
	}
	return In(dir, id)
}

// checkIDs refuses a run whose id, or its spec's, is not of the id form.
func (r *Run) checkIDs() error {
	if err := CheckID(r.ID); err != nil {
		return fmt.Errorf("run: %w", err)
	}
	if r.Spec != nil && r.Spec.ID != "" {
		if err := CheckID(r.Spec.ID); err != nil {
			return fmt.Errorf("run %s's spec: %w", r.ID, err)
		}
	}
	return nil
}

// CheckIDs refuses a reproduction whose id, or a step's run or spec id, is not of the id
// form; a step not begun has no run id yet.
func (rep *Reproduction) CheckIDs() error {
	if err := CheckID(rep.ID); err != nil {
		return fmt.Errorf("reproduction: %w", err)
	}
	var errs []error
	for i, st := range rep.Steps {
		for _, id := range []string{st.Run, st.ID} {
			if err := CheckID(id); id != "" && err != nil {
				errs = append(errs, fmt.Errorf("step %d: %w", i+1, err))
			}
		}
	}
	return errors.Join(errs...)
}
