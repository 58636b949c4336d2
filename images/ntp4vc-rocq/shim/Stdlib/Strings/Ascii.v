Require Export Coq.Strings.Ascii.
