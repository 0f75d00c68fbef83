package postgres

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// The data set: Rows rows of study 002's record (id, value, active, props) in table data.
// Rows 1 and 2 are the study's own two documents, so that /db/1 answers what /data/1 does;
// the rest are made from their id alone, the same at every start and on every machine: odd
// ids active, even ones not, and ids of as many digits and the same parity encode to JSON
// of one length.
const (
	Rows    = 10_000
	MaxRows = 1_000_000
	Table   = "data"
)

// Record is one row, encoded as the contract's /data/{id} encodes its record.
type Record struct {
	ID     int      `json:"id"`
	Value  string   `json:"value"`
	Active bool     `json:"active"`
	Props  []string `json:"props"`
}

// RecordOf is row id of the data set.
func RecordOf(id int) Record {
	switch id {
	case 1:
		return Record{ID: 1, Value: "one", Active: true, Props: []string{"yxc", "xcv", "xcv"}}
	case 2:
		return Record{ID: 2, Value: "two", Active: false, Props: []string{"qwe", "wer", "ert"}}
	}
	const letters = "abcdefghijklmnopqrstuvwxyz"
	props := make([]string, 3)
	for k := range props {
		props[k] = string([]byte{letters[(id+k)%26], letters[(id*3+k)%26], letters[(id*7+k)%26]})
	}
	return Record{ID: id, Value: fmt.Sprintf("v%07d", id), Active: id%2 == 1, Props: props}
}

// JSON is row id as the contract answers it: compact, fields in the record's order.
func JSON(id int) []byte {
	b, _ := json.Marshal(RecordOf(id)) // a Record always encodes
	return b
}

// writeScript writes the psql script that makes the table and copies rows 1..rows in.
func writeScript(w io.Writer, rows int) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "CREATE TABLE %s (id integer PRIMARY KEY, value text NOT NULL, active boolean NOT NULL, props text[] NOT NULL);\n", Table)
	fmt.Fprintf(bw, "COPY %s (id, value, active, props) FROM STDIN;\n", Table)
	for id := 1; id <= rows; id++ {
		r := RecordOf(id)
		active := "f"
		if r.Active {
			active = "t"
		}
		fmt.Fprintf(bw, "%d\t%s\t%s\t{%s}\n", r.ID, r.Value, active, strings.Join(r.Props, ","))
	}
	fmt.Fprintf(bw, "\\.\nANALYZE %s;\n", Table)
	return bw.Flush()
}
