module deepinfer.examples

go 1.19

require deepinfer v0.0.0

replace deepinfer => ../../bindings/go
