package main

import (
	"context"
	"errors"

	"github.com/cairndb/cairn"
)

// openTenants is the space of -mode tenants, which this build lacks.
func openTenants(context.Context, *cairn.DB, int) (space, error) {
	return nil, errors.New("-mode tenants: not in this build")
}
