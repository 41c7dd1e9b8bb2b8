"""Export a native package as a Harbor task: instance 0 made once, the verifier run by tests/test.sh, and the whole
package carried in tests/arena/ so that importing the export gives it back exactly (`bundle`)."""
