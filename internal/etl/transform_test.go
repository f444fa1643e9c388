package etl

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestEveryTransformType(t *testing.T) {
	row := map[string]string{"KUNNR": "100001", "NAME1": "  Müller GmbH ", "LAND1": "de", "ERDAT": "20240315", "EMPTY": "", "ORT01": "Berlin"}
	for _, tc := range []struct {
		m    FieldMapping
		want string
	}{
		{FieldMapping{Target: "X", Source: "LAND1", Transform: Direct}, "de"},
		{FieldMapping{Target: "X", Transform: Constant, Value: "0001"}, "0001"},
		{FieldMapping{Target: "X", Source: "LAND1", Transform: Uppercase}, "DE"},
		{FieldMapping{Target: "X", Source: "ORT01", Transform: Lowercase}, "berlin"},
		{FieldMapping{Target: "X", Source: "NAME1", Transform: Trim}, "Müller GmbH"},
		{FieldMapping{Target: "X", Source: "KUNNR", Transform: AlphaIn, Length: 10}, "0000100001"},
		{FieldMapping{Target: "X", Source: "NAME1", Transform: AlphaIn, Length: 10}, "Müller GmbH"}, // not numeric: unchanged but trimmed
		{FieldMapping{Target: "X", Source: "KUNNR", Transform: AlphaOut}, "100001"},
		{FieldMapping{Target: "X", Source: "ORT01", Transform: Substring, Start: 1, Length: 3}, "erl"},
		{FieldMapping{Target: "X", Transform: Concat, Fields: []string{"LAND1", "ORT01"}, Separator: "-"}, "de-Berlin"},
		{FieldMapping{Target: "X", Source: "LAND1", Transform: ValueMap, Map: map[string]string{"de": "DE"}}, "DE"},
		{FieldMapping{Target: "X", Source: "ORT01", Transform: ValueMap, Map: map[string]string{"de": "DE"}, Default: "??"}, "??"},
		{FieldMapping{Target: "X", Source: "ERDAT", Transform: DateFormat, From: "YYYYMMDD", To: "DD.MM.YYYY"}, "15.03.2024"},
		{FieldMapping{Target: "X", Source: "EMPTY", Transform: DefaultIfEmpty, Value: "N/A"}, "N/A"},
		{FieldMapping{Target: "X", Source: "ORT01", Transform: DefaultIfEmpty, Value: "N/A"}, "Berlin"},
	} {
		require.NoError(t, tc.m.Check(), tc.m.Transform)
		got, err := tc.m.Apply(row)
		require.NoError(t, err, tc.m.Transform)
		assert.Equal(t, tc.want, got, tc.m.Transform)
	}
	assert.Len(t, Types, 12)
}

func TestBadMappingsAreRefusedWithTheReason(t *testing.T) {
	for _, tc := range []struct {
		m    Mapping
		want string
	}{
		{Mapping{TargetTable: "KNA1", Fields: []FieldMapping{{Target: "A", Source: "A", Transform: Direct}}}, "source_table"},
		{Mapping{SourceTable: "KNA1", TargetTable: "KNA1"}, "no fields"},
		{Mapping{SourceTable: "A", TargetTable: "B", Fields: []FieldMapping{{Target: "X", Source: "Y", Transform: "shout"}}}, "unknown transform"},
		{Mapping{SourceTable: "A", TargetTable: "B", Fields: []FieldMapping{{Target: "X", Transform: Direct}}}, "needs a source"},
		{Mapping{SourceTable: "A", TargetTable: "B", Fields: []FieldMapping{{Target: "X", Source: "Y", Transform: AlphaIn}}}, "needs length"},
		{Mapping{SourceTable: "A", TargetTable: "B", Fields: []FieldMapping{{Target: "X", Source: "Y", Transform: DateFormat, From: "julian", To: "YYYYMMDD"}}}, "date_format"},
		{Mapping{SourceTable: "A", TargetTable: "B", Fields: []FieldMapping{{Target: "X", Source: "Y", Transform: Direct}, {Target: "X", Source: "Z", Transform: Direct}}}, "twice"},
	} {
		err := tc.m.Check()
		require.Error(t, err)
		assert.Contains(t, err.Error(), tc.want)
	}
	_, err := FieldMapping{Target: "X", Source: "K", Transform: AlphaIn, Length: 3}.Apply(map[string]string{"K": "12345"})
	assert.ErrorContains(t, err, "longer than 3")
	_, err = FieldMapping{Target: "X", Source: "D", Transform: DateFormat, From: "YYYYMMDD", To: "YYYY-MM-DD"}.Apply(map[string]string{"D": "2024-99"})
	assert.ErrorContains(t, err, "not a YYYYMMDD date")
}

func TestFingerprintIgnoresOrderButNotContent(t *testing.T) {
	a := Mapping{SourceTable: "KNA1", TargetTable: "KNA1", Fields: []FieldMapping{
		{Target: "KUNNR", Source: "KUNNR", Transform: AlphaIn, Length: 10}, {Target: "LAND1", Source: "LAND1", Transform: ValueMap, Map: map[string]string{"a": "1", "b": "2"}}}}
	b := Mapping{SourceTable: "KNA1", TargetTable: "KNA1", Fields: []FieldMapping{a.Fields[1], a.Fields[0]}}
	assert.Equal(t, a.Fingerprint(), b.Fingerprint())
	c := b
	c.Fields = []FieldMapping{a.Fields[0], {Target: "LAND1", Source: "LAND1", Transform: ValueMap, Map: map[string]string{"a": "1", "b": "3"}}}
	assert.NotEqual(t, a.Fingerprint(), c.Fingerprint())
	assert.Equal(t, []string{"KUNNR", "LAND1"}, a.SourceFields())
}
