// Package abap holds the ABAP the connector needs in a customer's system, as abapGit packages
// (zsapagent: Z_SAPAGENT_WRITE_TABLE for write_table). Its test runs abaplint over them.
package abap
