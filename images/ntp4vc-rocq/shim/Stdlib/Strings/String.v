Require Export Coq.Strings.String.
