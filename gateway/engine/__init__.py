"""The engine between the wire and the plugins: the config and manifest read, the plugins found and started, a
call's arguments checked, the plugin called under the gate, its answer masked and checked, and one audit line
written; tool pins and HTTP tokens.
"""
