// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

/// A stablecoin as the tests need one: ERC-20 with the issuer's mint and, like USDC and USDT,
/// a blocklist that makes any transfer from or to a blocked address revert.
contract TestToken {
    string public name;
    string public symbol;
    uint8 public immutable decimals;
    uint256 public totalSupply;
    address public immutable issuer;

    mapping(address => uint256) public balanceOf;
    mapping(address => mapping(address => uint256)) public allowance;
    mapping(address => bool) public blocked;

    event Transfer(address indexed from, address indexed to, uint256 value);
    event Approval(address indexed owner, address indexed spender, uint256 value);

    constructor(string memory name_, string memory symbol_, uint8 decimals_) {
        name = name_;
        symbol = symbol_;
        decimals = decimals_;
        issuer = msg.sender;
    }

    modifier onlyIssuer() {
        require(msg.sender == issuer, "not the issuer");
        _;
    }

    function mint(address to, uint256 value) external onlyIssuer {
        totalSupply += value;
        balanceOf[to] += value;
        emit Transfer(address(0), to, value);
    }

    function setBlocked(address account, bool isBlocked) external onlyIssuer {
        blocked[account] = isBlocked;
    }

    function transfer(address to, uint256 value) external returns (bool) {
        _move(msg.sender, to, value);
        return true;
    }

    function approve(address spender, uint256 value) external returns (bool) {
        allowance[msg.sender][spender] = value;
        emit Approval(msg.sender, spender, value);
        return true;
    }

    function transferFrom(address from, address to, uint256 value) external returns (bool) {
        uint256 allowed = allowance[from][msg.sender];
        require(allowed >= value, "allowance exceeded");
        if (allowed != type(uint256).max) {
            allowance[from][msg.sender] = allowed - value;
        }
        _move(from, to, value);
        return true;
    }

    /// Many transfers in one transaction, each its own Transfer log (as exchanges pay out).
    function batchTransfer(address[] calldata to, uint256[] calldata values) external {
        require(to.length == values.length, "length mismatch");
        for (uint256 i = 0; i < to.length; i++) {
            _move(msg.sender, to[i], values[i]);
        }
    }

    function _move(address from, address to, uint256 value) private {
        require(!blocked[from] && !blocked[to], "blocked");
        require(balanceOf[from] >= value, "balance exceeded");
        balanceOf[from] -= value;
        balanceOf[to] += value;
        emit Transfer(from, to, value);
    }
}
