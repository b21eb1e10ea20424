module deepinfer.examples

go 1.19

require deepinfer.dev/go v1.0.0

replace deepinfer.dev/go => ../../bindings/go
