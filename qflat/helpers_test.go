package qflat_test

import "github.com/cairndb/cairn/vector/quant"

func quantSample(n int) quant.TrainOptions   { return quant.TrainOptions{Sample: n} }
func quantClip(c float64) quant.TrainOptions { return quant.TrainOptions{Clip: c} }
