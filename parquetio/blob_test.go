package parquetio

import (
	"bytes"
	"reflect"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"
)

type blobRow struct {
	URL  string `parquet:"url"`
	Body []byte `parquet:"body" parquetio:"blob"`
	Text string `parquet:"text,optional" parquetio:"blob"`
}

// A field tagged parquetio:"blob" gets no page statistics and no column
// index bounds; the other columns keep theirs, and the rows read back.
func TestBlobColumnsHaveNoBounds(t *testing.T) {
	if got := blobColumns(reflect.TypeFor[blobRow]()); strings.Join(got, ",") != "body,text" {
		t.Fatalf("blob columns %v, want body,text", got)
	}
	var buf bytes.Buffer
	w := NewWriter[blobRow](&buf)
	var rows []blobRow
	for i := range 3000 {
		page := "<!DOCTYPE html><html><body>" + strings.Repeat("x", i%500) + "</body></html>"
		rows = append(rows, blobRow{URL: "http://h.test/" + string(rune('a'+i%26)), Body: []byte(page), Text: page[:20]})
	}
	if err := w.Write(rows...); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	pf, err := parquet.OpenFile(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if err != nil {
		t.Fatal(err)
	}
	md := pf.Metadata()
	for i, c := range md.RowGroups[0].Columns {
		name := c.MetaData.PathInSchema[0]
		st := c.MetaData.Statistics
		hasBounds := len(st.MinValue) > 0 || len(st.MaxValue) > 0
		ci := pf.ColumnIndexes()[i]
		hasIndexBounds := false
		for _, v := range ci.MinValues {
			hasIndexBounds = hasIndexBounds || len(v) > 0
		}
		blob := name == "body" || name == "text"
		t.Logf("%s: chunk stats min %d bytes, max %d bytes, index bounds %v", name, len(st.MinValue), len(st.MaxValue), hasIndexBounds)
		if blob && (hasBounds || hasIndexBounds) {
			t.Errorf("blob column %s has bounds", name)
		}
		if !blob && (!hasBounds || !hasIndexBounds) {
			t.Errorf("column %s lost its bounds", name)
		}
	}
}
